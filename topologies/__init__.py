"""mcastlab: topologies."""
