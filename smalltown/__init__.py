"""smalltown: a town of generative agents living out their days in your terminal."""

__version__ = "0.1.0"
