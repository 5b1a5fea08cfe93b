"""The core: how an op runs (see docs/architecture.md)."""
