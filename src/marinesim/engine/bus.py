"""Bus of named topics stamped with sim time, delivered at phase boundaries (engine spec §5).

Publishing only enqueues.  :meth:`Bus.deliver` moves every queued message whose delivery time
is ≤ the boundary time into the inboxes of the subscribers, in (delivery time, t_pub, sender,
seq) order.  ``local`` messages reach only plugins of the same entity block (row i is entity i);
``global`` messages reach every subscriber.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import EngineError

__all__ = ["Bus", "Inbox", "Message", "Subscription"]


@dataclass(frozen=True)
class Message:
    """One published message: payload rows from one block's entities.

    Attributes
    ----------
    topic : str
        Topic (variable) name, e.g. ``DESIRED_HEADING``.
    block : str
        Publishing entity block.
    rows : ndarray of int, shape (n,)
        Rows of the publishing block the payload rows belong to.
    sender : ndarray of int, shape (n,)
        Entity ids of the senders.
    value : ndarray, shape (n, ...)
        Payload (float for doubles, object for strings).
    t_pub : float
        Sim time of publication [s].
    t_stamp : float
        Sim time the data describes [s].
    t_deliver : float
        Earliest delivery time [s] (t_pub + delay).
    seq : int
        Sequence number per (topic, block).
    scope : str
        ``"local"`` or ``"global"``.
    source : str
        Publishing plugin name.
    """

    topic: str
    block: str
    rows: NDArray[np.int64]
    sender: NDArray[np.int64]
    value: NDArray[Any]
    t_pub: float
    t_stamp: float
    t_deliver: float
    seq: int
    scope: str = "local"
    source: str = ""


_new_message = object.__new__


@dataclass
class Subscription:
    """A plugin's subscription: topic names, its block, queue size and its inbox."""

    owner: str
    block: str
    topics: frozenset[str]
    queue_size: int | None = None
    inbox: list[Message] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)


class Inbox:
    """Read access to the messages delivered to one plugin since it last ran.

    Parameters
    ----------
    messages : list of Message
        In delivery order.
    n : int
        Rows of the receiving block.
    """

    def __init__(self, messages: list[Message], n: int) -> None:
        self.messages = messages
        self.n = n

    def __iter__(self):  # noqa: ANN204
        return iter(self.messages)

    def __len__(self) -> int:
        return len(self.messages)

    def topic(self, name: str) -> list[Message]:
        """Messages of one topic, in delivery order."""
        return [m for m in self.messages if m.topic == name]

    def latest(
        self, name: str, default: float = np.nan
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """Latest numeric value of a local topic per receiving row.

        Parameters
        ----------
        name : str
            Topic.
        default : float
            Value where no message arrived.

        Returns
        -------
        values : ndarray, shape (N,)
        received : ndarray of bool, shape (N,)
        """
        out = np.full(self.n, default, dtype=float)
        got = np.zeros(self.n, dtype=bool)
        for m in self.messages:
            if m.topic != name or m.scope != "local":
                continue
            vals = np.asarray(m.value)
            if vals.dtype == object:
                continue
            out[m.rows] = vals.reshape(len(m.rows), -1)[:, 0]
            got[m.rows] = True
        return out, got


class Bus:
    """Message queue and subscriptions of one simulation."""

    def __init__(self, network_queue_size: int | None = 100) -> None:
        #: Queue size per (receiver, topic) for global messages (engine spec §5.1); local
        #: topics are unbounded unless a subscription sets ``queue_size``.
        self.network_queue_size = network_queue_size
        self.subscriptions: list[Subscription] = []
        self.pending: list[Message] = []
        self._seq: dict[tuple[str, str], int] = {}
        self.published: dict[str, int] = {}
        self.delivered: dict[str, int] = {}
        self.unheard: dict[str, int] = {}
        self._wanted: dict[tuple[str, str, str], bool] = {}
        #: Topic → subscriptions to it, in subscription order (built by :meth:`subscribe`).
        self._by_topic: dict[str, list[Subscription]] = {}

    def subscribe(self, sub: Subscription) -> Subscription:
        """Add a subscription (at build time)."""
        self.subscriptions.append(sub)
        for topic in sub.topics:
            self._by_topic.setdefault(topic, []).append(sub)
        self._wanted.clear()
        return sub

    def wanted(self, topic: str, block: str, scope: str = "local") -> bool:
        """True when some subscription would receive ``topic`` published by ``block``."""
        key = (topic, block, scope)
        hit = self._wanted.get(key)
        if hit is None:
            hit = any(
                topic in s.topics and (scope == "global" or s.block == block)
                for s in self.subscriptions
            )
            self._wanted[key] = hit
        return hit

    def publish(
        self,
        topic: str,
        block: str,
        rows: NDArray[np.int64],
        sender: NDArray[np.int64],
        value: NDArray[Any],
        *,
        t_pub: float,
        t_stamp: float | None = None,
        delay: float = 0.0,
        scope: str = "local",
        source: str = "",
    ) -> Message:
        """Enqueue a message (delivered at the first boundary with time ≥ t_pub + delay)."""
        if scope not in ("local", "global"):
            raise EngineError(
                f"unknown bus scope {scope!r} for topic {topic!r} (use 'local' or 'global')"
            )
        if not (0.0 <= delay < math.inf):  # also refuses NaN
            raise EngineError(f"message delay must be finite and >= 0, got {delay!r} on {topic!r}")
        return self.enqueue(
            topic,
            block,
            np.asarray(rows, dtype=np.int64),
            np.asarray(sender, dtype=np.int64),
            value,
            float(t_pub),
            float(t_pub if t_stamp is None else t_stamp),
            float(t_pub + delay),
            scope,
            source,
        )

    def enqueue(
        self,
        topic: str,
        block: str,
        rows: NDArray[np.int64],
        sender: NDArray[np.int64],
        value: NDArray[Any],
        t_pub: float,
        t_stamp: float,
        t_deliver: float,
        scope: str,
        source: str,
    ) -> Message:
        """:meth:`publish` without its checks: arguments already typed and valid.

        ``rows``/``sender`` int64 arrays, times floats, ``scope`` ``"local"`` or ``"global"``,
        ``t_deliver ≥ t_pub`` finite.  For callers that validated them (the hook context).
        """
        key = (topic, block)
        seq = self._seq.get(key, 0)
        self._seq[key] = seq + 1
        # the dataclass's own __init__ sets the same eleven fields one object.__setattr__ at a
        # time (it is frozen); filling the instance dict at once is the same message, cheaper
        msg = _new_message(Message)
        msg.__dict__.update(
            topic=topic,
            block=block,
            rows=rows,
            sender=sender,
            value=value,
            t_pub=t_pub,
            t_stamp=t_stamp,
            t_deliver=t_deliver,
            seq=seq,
            scope=scope,
            source=source,
        )
        self.pending.append(msg)
        published = self.published
        published[topic] = published.get(topic, 0) + 1
        return msg

    def deliver(self, t: float) -> int:
        """Move due messages (delivery time ≤ t) into the subscribers' inboxes.

        Returns
        -------
        int
            Number of messages moved off the queue.
        """
        if not self.pending:
            return 0
        tol = 1e-9 * max(1.0, abs(t))
        due = [m for m in self.pending if m.t_deliver <= t + tol]
        if not due:
            return 0
        self.pending = [m for m in self.pending if m.t_deliver > t + tol]
        due.sort(
            key=lambda m: (m.t_deliver, m.t_pub, int(m.sender[0]) if len(m.sender) else -1, m.seq)
        )
        # each subscriber gets its messages in due order; only subscribers that got one can
        # exceed a queue bound (the others were capped at the previous delivery)
        got: dict[int, Subscription] = {}
        delivered = self.delivered
        by_topic = self._by_topic
        any_global = False
        for m in due:
            subs = by_topic.get(m.topic)
            if not subs:
                continue
            local = m.scope == "local"
            any_global = any_global or not local
            for sub in subs:
                if local and m.block != sub.block:
                    continue
                sub.inbox.append(m)
                delivered[m.topic] = delivered.get(m.topic, 0) + 1
                got[id(sub)] = sub
        for sub in self.subscriptions:
            if id(sub) not in got:
                continue
            if sub.queue_size is not None and len(sub.inbox) > sub.queue_size:
                extra = len(sub.inbox) - sub.queue_size
                for m in sub.inbox[:extra]:
                    sub.dropped[m.topic] = sub.dropped.get(m.topic, 0) + 1
                del sub.inbox[:extra]
            elif any_global and self.network_queue_size is not None:
                # only global messages count against this bound, and the inbox held at most
                # the bound of each after the previous delivery: nothing to drop without one
                self._cap_global(sub)
        return len(due)

    def _cap_global(self, sub: Subscription) -> None:
        """Keep at most ``network_queue_size`` global messages per topic (oldest dropped, counted)."""
        cap = self.network_queue_size
        assert cap is not None
        counts: dict[str, int] = {}
        for m in sub.inbox:
            if m.scope == "global":
                counts[m.topic] = counts.get(m.topic, 0) + 1
        over = {k: v - cap for k, v in counts.items() if v > cap}
        if not over:
            return
        keep = []
        for m in sub.inbox:
            if m.scope == "global" and over.get(m.topic, 0) > 0:
                over[m.topic] -= 1
                sub.dropped[m.topic] = sub.dropped.get(m.topic, 0) + 1
                continue
            keep.append(m)
        sub.inbox[:] = keep

    def stats(self) -> dict[str, Any]:
        """Published, delivered and dropped counts per topic."""
        dropped: dict[str, int] = {}
        for sub in self.subscriptions:
            for k, v in sub.dropped.items():
                dropped[f"{sub.owner}:{k}"] = v
        return {
            "published": dict(sorted(self.published.items())),
            "delivered": dict(sorted(self.delivered.items())),
            "dropped": dropped,
            "no_subscriber": dict(sorted(self.unheard.items())),
        }
