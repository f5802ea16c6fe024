"""Runs as ROS 2 topics: a rosbag2-compatible MCAP log and a live Foxglove WebSocket view.

* :mod:`~marinesim.io.mcap.frames` — NED/FRD ↔ ENU/FLU at the ROS boundary;
* :mod:`~marinesim.io.mcap.msgdefs` — the ``ros2msg`` definitions of the types written;
* :mod:`~marinesim.io.mcap.cdr` — vectorised CDR encoding of a chunk of frames;
* :mod:`~marinesim.io.mcap.topics` — which topics a run has, and their content;
* :mod:`~marinesim.io.mcap.writer` — ``log.mcap``, streamed one MCAP chunk per flush;
* :mod:`~marinesim.io.mcap.reader` — reading it back (also without its summary section);
* :mod:`~marinesim.io.mcap.live` — the same channels served over the Foxglove WebSocket protocol.

Needs the ``mcap`` extra (``pip install marinesim[mcap]``: ``mcap``, ``mcap-ros2-support``,
``foxglove-sdk``).
"""
