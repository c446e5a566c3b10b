from buildkit import setup

setup()
