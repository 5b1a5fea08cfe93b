"""The base layer: dtypes, errors, shapes, nested structures, profiling events and user-code
frames. Standard library and numpy only; every other layer may import it."""
