-- Worlds by home, in id order: WorldList's home filter, which each home
-- pool replica pages through every T_renew to look at its pool's worlds.
CREATE INDEX worlds_home ON worlds (home, id);
