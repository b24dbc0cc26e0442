"""One module per console page (or pair of pages); each exports ``ROUTES``."""
