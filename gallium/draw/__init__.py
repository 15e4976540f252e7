"""The vertex side of the pipeline (Mesa's draw module): vertex fetch, index
reading, vertex shading, primitive assembly and clipping."""
