"""Who answers the mind's questions. `tasks` is the seam: typed questions, typed answers."""
