"""The labelling page: ``activetest serve eval.db`` serves one HTML page (its script
and style ship in ``static/``; no CDN, no framework, no network) from the Python
standard library's HTTP server, with a JSON API over
:class:`activetest.session.annotators.Annotators`. See docs/labelling.md."""

from activetest.web.server import LabelServer, serve

__all__ = ["LabelServer", "serve"]
