"""Drop-in APIs of other memory libraries over unrecall.

``unrecall.compat.mem0.Memory`` speaks Mem0 OSS's method names, arguments
and return dicts, so code written for Mem0 runs on unrecall by changing one
import. Each module here is a thin adapter over ``unrecall.Memory`` and
imports nothing of the library it imitates.
"""
