-- load basic machers
require('luassert.matchers.core')
require('luassert.matchers.composite')
