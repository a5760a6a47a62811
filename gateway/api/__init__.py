"""HTTP adapters: each module exposes ``routes(...)`` bound to the services it needs, and
`gateway.app.create_app` assembles them."""
