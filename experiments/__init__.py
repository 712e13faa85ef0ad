"""mcastlab: experiments."""
