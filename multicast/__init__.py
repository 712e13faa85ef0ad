"""mcastlab: multicast."""
