"""mcastlab: analysis."""
