"""The parts of a generated benchmark workspace: catalog, Database Functions, Mutations, FaaS.

`bench.generate.generate_workspace` puts them together and writes the files.
"""
