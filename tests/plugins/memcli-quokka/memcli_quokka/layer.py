"""A recall layer with one fixed answer."""

from memcli.api import Candidate, Hit, Layer

FACT = "Quokkas live on Rottnest Island and smile because of the shape of their mouths."


class QuokkaLayer(Layer):
    name = "quokka"
    help = "one fixed fact about quokkas"

    def search(self, ask):
        if "quokka" not in ask.text.lower():
            return [], 1
        hit = Hit(self.name, "quokka-fact", "Where quokkas live", "quokka", 0.9, FACT)
        return [Candidate(hit, 0.9)], 1
