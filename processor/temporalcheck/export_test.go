package temporalcheck

// VerdictsOf is verdictsOf, for the tests of package temporalcheck_test.
var VerdictsOf = verdictsOf
