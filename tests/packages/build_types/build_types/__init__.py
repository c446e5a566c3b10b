"""The package the build types' files are installed into."""
