"""fastrag: benchmark retrievers and RAG pipelines with metric objects and an async harness."""

__all__: list[str] = []
