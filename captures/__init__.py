"""mcastlab: captures."""
