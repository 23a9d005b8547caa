package neutralize

import "testing"

func TestDevOnly(t *testing.T) { evaluate(loadCorpus(t, "dev")).log(t, "dev") }
