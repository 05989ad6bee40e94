"""The web app: `app.create_app(settings, backend)` builds it from the modules here, each a FastHTML
`APIRouter` with the components it draws and the routes they use; `serve` runs it with uvicorn."""
