"""Use cases over a root: reflection (reflect.py, its engines in reflect_engines/) and the review inbox
(inbox.py). Each takes the Memory facade's root and configuration and returns plain values."""
