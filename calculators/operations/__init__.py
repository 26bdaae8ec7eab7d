"""Running an engine as a service: the benchmark plan (phases, load points, commands per engine's load tool)."""
