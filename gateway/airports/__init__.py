"""Airport data adapter: the shipped dataset behind `AirportRepository`."""

from gateway.airports.repository import AirportRepository, default_repository

__all__ = ["AirportRepository", "default_repository"]
