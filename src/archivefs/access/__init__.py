"""The work behind :class:`archivefs.filesystem.ArchiveFileSystem`, in small collaborators.

Each is given its parts at construction (:class:`archivefs.access.parts.Parts`,
and the other collaborators it uses) and none imports the face: ``listing``
(info, ls, find, glob, du), ``resolve`` (the one expansion of a selection),
``policy`` (``on_archived``), ``bundles`` and ``reads`` (the one counting point),
``copies`` (local files), ``promote``, ``writes``, ``approval`` (budget and
estimates), ``restoring`` (plan, restore, prefetch), ``cold``/``hot`` (the stores) and
``caches`` (listings, read hints, catalogs); ``assembly`` makes them all.
"""
