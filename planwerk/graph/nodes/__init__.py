"""The graph's nodes, one module each, wired by :mod:`planwerk.graph.builder`; helpers they share in
:mod:`~planwerk.graph.nodes.common`."""
