"""One module per model; each defines ``checks(quick: bool) -> list[Check]`` (see registry.py)."""
