"""The open protocols agboss speaks: AG-UI (`agboss.protocols.agui`), A2A
(`agboss.protocols.a2a`) and MCP as a server (`agboss.protocols.mcp`).

Each serves a workflow through its protocol's official package, and shows and answers its
questions by the same rules as the approvals page: by reference, for the signed-in person who
may answer them. Each needs its own extra; this package imports none of them.
"""
