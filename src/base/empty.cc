// Placeholder source for modules with no sources of their own yet.
