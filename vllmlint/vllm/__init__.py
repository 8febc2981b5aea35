"""vLLM itself: invocations found in containers and scripts, release catalogs, flags, images."""
