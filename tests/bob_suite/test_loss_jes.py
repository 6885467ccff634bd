# Adapted from bob.learn.boosting 2.0.19, bob/learn/boosting/tests/test_loss_jes.py
# (github.com/bioidiap/bob.learn.boosting); what was changed: tests/bob_suite/README.md.
#
# bob.learn.boosting's licence:
#
# Copyright (c) 2016 Idiap Research Institute, http://www.idiap.ch/
# Written by Andre Anjos <andre.anjos@idiap.ch>
#
# Redistribution and use in source and binary forms, with or without
# modification, are permitted provided that the following conditions are met:
#
# 1. Redistributions of source code must retain the above copyright notice, this
# list of conditions and the following disclaimer.
#
# 2. Redistributions in binary form must reproduce the above copyright notice,
# this list of conditions and the following disclaimer in the documentation
# and/or other materials provided with the distribution.
#
# 3. Neither the name of the copyright holder nor the names of its contributors
# may be used to endorse or promote products derived from this software without
# specific prior written permission.
#
# THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND
# ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED
# WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
# DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE
# FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
# DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
# SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
# CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
# OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
# OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.

import unittest
#from unittest import SkipTest
import random
import bob_boost.compat.alias  # noqa: F401  (adapted: bob.learn.boosting -> bob_boost.compat.bob)
import bob.learn.boosting
import numpy

class TestJesorskyLoss(unittest.TestCase):

  """ Test the loss function using multivariate data  """

  def test01_multivariate_dimensions(self):

    # Check the loss function values for multivariate targets

    loss_function = bob.learn.boosting.JesorskyLoss()
    num_samples = 2
    num_outputs = 4
    targets = numpy.array([[10, 10, 10, 30], [12, 11, 13, 29]], 'float64')
    score = numpy.array([[8, 9, 7, 34], [11, 6, 16, 26]], 'float64')
    alpha = numpy.array([0.5, 0.5, 0.5, 0.5])
    weak_scores = numpy.array([[0.2, 0.4, 0.5, 0.6], [0.5, 0.5, 0.5, 0.5]], 'float64')
    prev_scores = numpy.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.5, 0.5]], 'float64')

    # check the loss dimensions
    loss_value = loss_function.loss(targets, score)
    self.assertTrue(loss_value.shape[0] == num_samples)
    self.assertTrue(loss_value.shape[1] == 1)

    # Check loss gradient
    grad_value = loss_function.loss_gradient( targets, score)
    self.assertTrue(grad_value.shape[0] == num_samples)
    self.assertTrue(grad_value.shape[1] == num_outputs)

    # Check loss sum
    loss_sum = loss_function.loss_sum(alpha, targets, prev_scores, weak_scores)
    self.assertTrue(loss_sum.shape[0] == 1)

    # Check the gradient sum
    grad_sum = loss_function.loss_gradient_sum(alpha, targets, prev_scores, weak_scores)
    self.assertTrue(grad_sum.shape[0] == num_outputs)


