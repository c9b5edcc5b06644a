"""Storage backends behind one narrow interface (see ``base.Storage``)."""
