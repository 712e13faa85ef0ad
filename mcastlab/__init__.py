"""mcastlab: a network-emulation testbed for DDS over IP multicast vs unicast."""

__version__ = "0.1.0"
