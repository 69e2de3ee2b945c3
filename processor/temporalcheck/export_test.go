// SPDX-License-Identifier: Apache-2.0

package temporalcheck

// VerdictsOf is verdictsOf, for the tests of package temporalcheck_test.
var VerdictsOf = verdictsOf
