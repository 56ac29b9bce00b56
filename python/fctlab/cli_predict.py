"""Old home of the ``fctlab predict`` commands, kept for one release: they now live in :mod:`fctlab.cli.predict`."""

from fctlab.cli.predict import annotate, eval_, generate, predict_app, register, train

__all__ = ["register", "predict_app", "generate", "train", "eval_", "annotate"]
