"""Drop-in filters for other retrieval pipelines: a LangChain document compressor
(`codevouch.integrations.langchain`, extra `langchain`) and a LlamaIndex node
postprocessor (`codevouch.integrations.llamaindex`, extra `llamaindex`).

Each imports its library when imported itself; `import codevouch` imports neither. What they
share (a window as a snippet, the verdict as metadata, what is kept) is in `windows`.
"""
