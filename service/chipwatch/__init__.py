"""chipwatch: knowledge base and signal monitor for the AI inference chip race."""

__version__ = "0.1.0"
USER_AGENT = f"chipwatch/{__version__} (+https://github.com/chipwatch/chipwatch)"
