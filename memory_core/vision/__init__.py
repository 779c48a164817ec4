"""Images understood: a vision model describes each image once per content hash."""
