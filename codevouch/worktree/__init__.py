"""The only doors to git and to the working tree: git processes, safe reads, paths, rules, config."""
