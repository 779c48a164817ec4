"""Who is who: every platform user the archive heard is one person, with the names
they went by in each chat over time (docs/design.md#people).

- names.py: what counts as a name, and the one spelling names are matched by;
- observe.py: archived messages -> the persons and names they show (pure);
- aliases.py: the aliases table folded onto the persons of a chat (pure);
- service.py: `People`, filled in the archive writer's transaction and by the
  resumable rebuild, and read by name, person and chat.
"""
