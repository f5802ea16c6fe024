"""ROS 2 message definitions (``ros2msg`` text) of the types marinesim writes.

Each MCAP schema carries the full definition of its type: the type's own fields, then every
type it uses, each after a line of 80 ``=`` and a ``MSG: package/Type`` line, as rosbag2 and
the ``mcap`` tools write them.  The field lists follow the released interface packages
(``std_msgs``, ``geometry_msgs``, ``nav_msgs``, ``sensor_msgs``, ``tf2_msgs``,
``rosgraph_msgs`` of ROS 2 Humble and later, and Foxglove's ``foxglove_msgs``); the text is
written here, comments left out.
"""

from __future__ import annotations

__all__ = ["DEFINITIONS", "full_definition", "schema_name"]

_SEP = "=" * 80

#: Field lists by ``package/Type`` (a type named without package is in the same package).
DEFINITIONS: dict[str, str] = {
    "builtin_interfaces/Time": "int32 sec\nuint32 nanosec",
    "builtin_interfaces/Duration": "int32 sec\nuint32 nanosec",
    "std_msgs/Header": "builtin_interfaces/Time stamp\nstring frame_id",
    "std_msgs/MultiArrayDimension": "string label\nuint32 size\nuint32 stride",
    "std_msgs/MultiArrayLayout": "MultiArrayDimension[] dim\nuint32 data_offset",
    "std_msgs/Float64MultiArray": "MultiArrayLayout layout\nfloat64[] data",
    "geometry_msgs/Point": "float64 x\nfloat64 y\nfloat64 z",
    "geometry_msgs/Vector3": "float64 x\nfloat64 y\nfloat64 z",
    "geometry_msgs/Quaternion": "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1",
    "geometry_msgs/Pose": "Point position\nQuaternion orientation",
    "geometry_msgs/PoseWithCovariance": "Pose pose\nfloat64[36] covariance",
    "geometry_msgs/Twist": "Vector3 linear\nVector3 angular",
    "geometry_msgs/TwistWithCovariance": "Twist twist\nfloat64[36] covariance",
    "geometry_msgs/TwistWithCovarianceStamped": (
        "std_msgs/Header header\nTwistWithCovariance twist"
    ),
    "geometry_msgs/Wrench": "Vector3 force\nVector3 torque",
    "geometry_msgs/WrenchStamped": "std_msgs/Header header\nWrench wrench",
    "geometry_msgs/Transform": "Vector3 translation\nQuaternion rotation",
    "geometry_msgs/TransformStamped": (
        "std_msgs/Header header\nstring child_frame_id\nTransform transform"
    ),
    "nav_msgs/Odometry": (
        "std_msgs/Header header\nstring child_frame_id\n"
        "geometry_msgs/PoseWithCovariance pose\ngeometry_msgs/TwistWithCovariance twist"
    ),
    "sensor_msgs/Imu": (
        "std_msgs/Header header\n"
        "geometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance\n"
        "geometry_msgs/Vector3 angular_velocity\nfloat64[9] angular_velocity_covariance\n"
        "geometry_msgs/Vector3 linear_acceleration\nfloat64[9] linear_acceleration_covariance"
    ),
    "sensor_msgs/FluidPressure": "std_msgs/Header header\nfloat64 fluid_pressure\nfloat64 variance",
    "sensor_msgs/NavSatStatus": (
        "int8 STATUS_NO_FIX = -1\nint8 STATUS_FIX = 0\n"
        "int8 STATUS_SBAS_FIX = 1\nint8 STATUS_GBAS_FIX = 2\nint8 status\n"
        "uint16 SERVICE_GPS = 1\nuint16 SERVICE_GLONASS = 2\nuint16 SERVICE_COMPASS = 4\n"
        "uint16 SERVICE_GALILEO = 8\nuint16 service"
    ),
    "sensor_msgs/NavSatFix": (
        "std_msgs/Header header\nNavSatStatus status\n"
        "float64 latitude\nfloat64 longitude\nfloat64 altitude\n"
        "float64[9] position_covariance\n"
        "uint8 COVARIANCE_TYPE_UNKNOWN = 0\nuint8 COVARIANCE_TYPE_APPROXIMATED = 1\n"
        "uint8 COVARIANCE_TYPE_DIAGONAL_KNOWN = 2\nuint8 COVARIANCE_TYPE_KNOWN = 3\n"
        "uint8 position_covariance_type"
    ),
    "sensor_msgs/Range": (
        "std_msgs/Header header\nuint8 ULTRASOUND = 0\nuint8 INFRARED = 1\n"
        "uint8 radiation_type\nfloat32 field_of_view\nfloat32 min_range\n"
        "float32 max_range\nfloat32 range"
    ),
    "sensor_msgs/BatteryState": (
        "uint8 POWER_SUPPLY_STATUS_UNKNOWN = 0\nuint8 POWER_SUPPLY_STATUS_CHARGING = 1\n"
        "uint8 POWER_SUPPLY_STATUS_DISCHARGING = 2\nuint8 POWER_SUPPLY_STATUS_NOT_CHARGING = 3\n"
        "uint8 POWER_SUPPLY_STATUS_FULL = 4\n"
        "uint8 POWER_SUPPLY_HEALTH_UNKNOWN = 0\nuint8 POWER_SUPPLY_HEALTH_GOOD = 1\n"
        "uint8 POWER_SUPPLY_HEALTH_OVERHEAT = 2\nuint8 POWER_SUPPLY_HEALTH_DEAD = 3\n"
        "uint8 POWER_SUPPLY_HEALTH_OVERVOLTAGE = 4\nuint8 POWER_SUPPLY_HEALTH_UNSPEC_FAILURE = 5\n"
        "uint8 POWER_SUPPLY_HEALTH_COLD = 6\nuint8 POWER_SUPPLY_HEALTH_WATCHDOG_TIMER_EXPIRE = 7\n"
        "uint8 POWER_SUPPLY_HEALTH_SAFETY_TIMER_EXPIRE = 8\n"
        "uint8 POWER_SUPPLY_TECHNOLOGY_UNKNOWN = 0\nuint8 POWER_SUPPLY_TECHNOLOGY_NIMH = 1\n"
        "uint8 POWER_SUPPLY_TECHNOLOGY_LION = 2\nuint8 POWER_SUPPLY_TECHNOLOGY_LIPO = 3\n"
        "uint8 POWER_SUPPLY_TECHNOLOGY_LIFE = 4\nuint8 POWER_SUPPLY_TECHNOLOGY_NICD = 5\n"
        "uint8 POWER_SUPPLY_TECHNOLOGY_LIMN = 6\n"
        "std_msgs/Header header\nfloat32 voltage\nfloat32 temperature\nfloat32 current\n"
        "float32 charge\nfloat32 capacity\nfloat32 design_capacity\nfloat32 percentage\n"
        "uint8 power_supply_status\nuint8 power_supply_health\n"
        "uint8 power_supply_technology\nbool present\n"
        "float32[] cell_voltage\nfloat32[] cell_temperature\n"
        "string location\nstring serial_number"
    ),
    "tf2_msgs/TFMessage": "geometry_msgs/TransformStamped[] transforms",
    "rosgraph_msgs/Clock": "builtin_interfaces/Time clock",
    "foxglove_msgs/Color": "float64 r\nfloat64 g\nfloat64 b\nfloat64 a",
    "foxglove_msgs/KeyValuePair": "string key\nstring value",
    "foxglove_msgs/ArrowPrimitive": (
        "geometry_msgs/Pose pose\nfloat64 shaft_length\nfloat64 shaft_diameter\n"
        "float64 head_length\nfloat64 head_diameter\nColor color"
    ),
    "foxglove_msgs/CubePrimitive": "geometry_msgs/Pose pose\ngeometry_msgs/Vector3 size\nColor color",
    "foxglove_msgs/SpherePrimitive": (
        "geometry_msgs/Pose pose\ngeometry_msgs/Vector3 size\nColor color"
    ),
    "foxglove_msgs/CylinderPrimitive": (
        "geometry_msgs/Pose pose\ngeometry_msgs/Vector3 size\nfloat64 bottom_scale\n"
        "float64 top_scale\nColor color"
    ),
    "foxglove_msgs/LinePrimitive": (
        "uint8 LINE_STRIP = 0\nuint8 LINE_LOOP = 1\nuint8 LINE_LIST = 2\nuint8 type\n"
        "geometry_msgs/Pose pose\nfloat64 thickness\nbool scale_invariant\n"
        "geometry_msgs/Point[] points\nColor color\nColor[] colors\nuint32[] indices"
    ),
    "foxglove_msgs/TriangleListPrimitive": (
        "geometry_msgs/Pose pose\ngeometry_msgs/Point[] points\nColor color\nColor[] colors\n"
        "uint32[] indices"
    ),
    "foxglove_msgs/TextPrimitive": (
        "geometry_msgs/Pose pose\nbool billboard\nfloat64 font_size\nbool scale_invariant\n"
        "Color color\nstring text"
    ),
    "foxglove_msgs/ModelPrimitive": (
        "geometry_msgs/Pose pose\ngeometry_msgs/Vector3 scale\nColor color\n"
        "bool override_color\nstring url\nstring media_type\nuint8[] data"
    ),
    "foxglove_msgs/SceneEntity": (
        "builtin_interfaces/Time timestamp\nstring frame_id\nstring id\n"
        "builtin_interfaces/Duration lifetime\nbool frame_locked\n"
        "KeyValuePair[] metadata\nArrowPrimitive[] arrows\nCubePrimitive[] cubes\n"
        "SpherePrimitive[] spheres\nCylinderPrimitive[] cylinders\nLinePrimitive[] lines\n"
        "TriangleListPrimitive[] triangles\nTextPrimitive[] texts\nModelPrimitive[] models"
    ),
    "foxglove_msgs/SceneEntityDeletion": (
        "builtin_interfaces/Time timestamp\nuint8 MATCHING_ID = 0\nuint8 ALL = 1\nuint8 type\n"
        "string id"
    ),
    "foxglove_msgs/SceneUpdate": "SceneEntityDeletion[] deletions\nSceneEntity[] entities",
    "foxglove_msgs/LocationFix": (
        "builtin_interfaces/Time timestamp\nstring frame_id\n"
        "float64 latitude\nfloat64 longitude\nfloat64 altitude\n"
        "float64[9] position_covariance\n"
        "uint8 UNKNOWN = 0\nuint8 APPROXIMATED = 1\nuint8 DIAGONAL_KNOWN = 2\nuint8 KNOWN = 3\n"
        "uint8 position_covariance_type\nColor color"
    ),
}

_PRIMITIVES = {
    "bool",
    "byte",
    "char",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float32",
    "float64",
    "string",
    "wstring",
}


def _used(pkg_type: str) -> list[str]:
    """Types used by the fields of ``pkg_type``, fully named, in order of first use."""
    pkg = pkg_type.split("/")[0]
    out: list[str] = []
    for line in DEFINITIONS[pkg_type].splitlines():
        typ = line.split()[0].split("[")[0]
        if typ in _PRIMITIVES or "=" in line:
            continue
        full = typ if "/" in typ else f"{pkg}/{typ}"
        if full not in out:
            out.append(full)
    return out


def full_definition(pkg_type: str) -> str:
    """The ``ros2msg`` schema text of ``package/Type`` with every dependency appended.

    Raises
    ------
    KeyError
        An unknown type.
    """
    order: list[str] = []
    stack = list(reversed(_used(pkg_type)))
    while stack:
        t = stack.pop()
        if t in order or t == pkg_type:
            continue
        order.append(t)
        stack.extend(reversed(_used(t)))
    parts = [DEFINITIONS[pkg_type]]
    for t in order:
        parts.append(f"{_SEP}\nMSG: {t}\n{DEFINITIONS[t]}")
    return "\n".join(parts) + "\n"


def schema_name(pkg_type: str) -> str:
    """``package/Type`` → the ROS 2 schema name ``package/msg/Type``."""
    pkg, typ = pkg_type.split("/")
    return f"{pkg}/msg/{typ}"
