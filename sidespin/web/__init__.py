"""The web page's side of sidespin: turns played in the background for pages to watch (`live`), and the
components that draw a conversation (`page`). `server.py` holds the app and its routes."""
