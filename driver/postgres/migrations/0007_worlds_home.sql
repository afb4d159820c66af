-- Worlds by home, in id order: WorldList's home filter, which each home
-- pool replica pages through every T_renew to look at its pool's worlds.
-- The same index as the SQLite driver's 0006.
CREATE INDEX worlds_home ON worlds (home, id);
