"""Class sessions as they run: the teacher's grid (`progress`), the room's live state and its change
feed (`live`: editing, raised hands, follow-me; in this process or in Redis), the runs a class
watches to their end (`room`), what makes a run a class run (`runs`: the admission `server.submit`
takes), the class board of a challenge step (`board`), and the streams that
carry all of it to the teacher's and the students' pages (`stream`)."""
