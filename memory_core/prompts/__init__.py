"""Every prompt yuji sends, as pure functions, each beside the response it expects."""
