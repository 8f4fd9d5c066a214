"""ctxlab's tests: one folder per package of ctxlab, the project-wide checks at the top."""
