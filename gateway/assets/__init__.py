"""The files the gateway serves: the YAML flows (``flows/``) and the browser client (``static/``).

They live inside the package so an installed wheel carries them; the checkout's top-level
``flows/`` and ``static/`` are symlinks to these directories. Found through `gateway.resources`.
"""
