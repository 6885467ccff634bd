# Adapted from bob.learn.boosting 2.0.19, bob/learn/boosting/tests/test_boosting.py
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
import bob_boost.compat.alias  # noqa: F401  (adapted: bob.learn.boosting -> bob_boost.compat.bob)
import bob.learn.boosting
import numpy
import bob

import bob.learn.boosting.utils

class TestBoosting(unittest.TestCase):
  """Class to test the LUT trainer """

  def _data(self, digits = [3, 0], count = 20):

    self.database = bob.learn.boosting.utils.MNIST()

    # get the data
    inputs, targets = [], []
    for digit in digits:
      input, target = self.database.data(labels = digit)
      inputs.append(input[:count])
      targets.append(target[:count])
    return numpy.vstack(inputs), numpy.hstack(targets)

  def _align_uni(self, targets):
    # align target data to be used in a uni-variate classification
    aligned = numpy.ones(targets.shape)
    aligned[targets != targets[0]] = -1
    return aligned

  def _align_multi(self, targets, digits):
    aligned = - numpy.ones((targets.shape[0], len(digits)))
    for i, d in enumerate(digits):
      aligned[targets==d, i] = 1
    return aligned

  def test01_stump_boosting(self):
    # get test input data
    inputs, targets = self._data()
    aligned = self._align_uni(targets)

    # for stump trainers, the exponential loss function is preferred
    loss_function = bob.learn.boosting.ExponentialLoss()
    weak_trainer = bob.learn.boosting.StumpTrainer()
    booster = bob.learn.boosting.Boosting(weak_trainer, loss_function)

    # perform boosting
    machine = booster.train(inputs.astype(numpy.float64), aligned, number_of_rounds=1)
    # check the result
    weight = 1.83178082
    self.assertEqual(machine.weights.shape, (1,1))
    self.assertTrue(numpy.allclose(machine.weights, -weight))
    self.assertEqual(len(machine.weak_machines), 1)
    self.assertEqual(machine.indices, [483])
    weak = machine.weak_machines[0]
    self.assertTrue(isinstance(weak, bob.learn.boosting.StumpMachine))
    self.assertEqual(weak.threshold, 15.5)
    self.assertEqual(weak.polarity, 1.)

    # check first training image
    single = machine(inputs[0].astype(numpy.uint16))
    self.assertAlmostEqual(single, weight)
    # check all training images
    scores = numpy.ndarray(aligned.shape)
    labels = numpy.ndarray(aligned.shape)
    machine(inputs.astype(numpy.uint16), scores, labels)
    # assert that 39 (out of 40) labels are correctly classified by a single feature position
    self.assertTrue(numpy.allclose(labels * scores, weight))
    self.assertEqual(numpy.count_nonzero(labels == aligned), 39)



  def test02_lut_boosting(self):
    # get test input data
    inputs, targets = self._data()
    aligned = self._align_uni(targets)

    # for stump trainers, the logit loss function is preferred
    loss_function = bob.learn.boosting.LogitLoss()
    weak_trainer = bob.learn.boosting.LUTTrainer(256)
    booster = bob.learn.boosting.Boosting(weak_trainer, loss_function)

    # perform boosting
    weight = 15.46452387
    machine = booster.train(inputs.astype(numpy.uint16), aligned, number_of_rounds=1)
    self.assertEqual(machine.weights.shape, (1,1))
    self.assertTrue(numpy.allclose(machine.weights, -weight))
    self.assertEqual(len(machine.weak_machines), 1)
    self.assertEqual(machine.indices, [379])
    weak = machine.weak_machines[0]
    self.assertTrue(isinstance(weak, bob.learn.boosting.LUTMachine))
    self.assertEqual(weak.lut.shape, (256,1))

    # check first training image
    single = machine(inputs[0].astype(numpy.uint16))
    self.assertAlmostEqual(single, weight)

    # check all training images
    scores = numpy.ndarray(aligned.shape)
    labels = numpy.ndarray(aligned.shape)
    machine(inputs.astype(numpy.uint16), scores, labels)
    # assert that 40 (out of 40) labels are correctly classified by a single feature position
    self.assertTrue(numpy.allclose(labels * scores, weight))
    self.assertEqual(numpy.count_nonzero(labels == aligned), 40)


  def test03_multi_shared(self):
     # get test input data
    digits = [1, 4, 7, 9]
    inputs, targets = self._data(digits)
    aligned = self._align_multi(targets, digits)

    # for stump trainers, the logit loss function is preferred
    loss_function = bob.learn.boosting.LogitLoss()
    weak_trainer = bob.learn.boosting.LUTTrainer(256, len(digits), "shared")
    booster = bob.learn.boosting.Boosting(weak_trainer, loss_function)

    # perform boosting
    weights = numpy.array([2.5123104, 2.19725677, 2.34455412, 1.94584326])
    machine = booster.train(inputs.astype(numpy.uint16), aligned, number_of_rounds=1)
    self.assertEqual(machine.weights.shape, (1,len(digits)))
    self.assertTrue(numpy.allclose(machine.weights, -weights))
    self.assertEqual(len(machine.weak_machines), 1)
    self.assertEqual(machine.indices, [437])
    weak = machine.weak_machines[0]
    self.assertTrue(isinstance(weak, bob.learn.boosting.LUTMachine))
    self.assertEqual(weak.lut.shape, (256,4))

    # check first training image
    score = numpy.ndarray(4)
    machine(inputs[0].astype(numpy.uint16), score)
    self.assertTrue(numpy.allclose(score, weights * numpy.array([1., -1., -1., -1.])))

    # check all training images
    scores = numpy.ndarray(aligned.shape)
    labels = numpy.ndarray(aligned.shape)
    machine(inputs.astype(numpy.uint16), scores, labels)
    # assert that 286 (out of 360) labels are correctly classified by a single feature position
    self.assertTrue(all([numpy.allclose(numpy.abs(scores[i]), weights) for i in range(labels.shape[0])]))
    self.assertEqual(numpy.count_nonzero(labels == aligned), 286)


  def test04_multi_independent(self):
    # get test input data
    digits = [1, 4, 7, 9]
    inputs, targets = self._data(digits)
    aligned = self._align_multi(targets, digits)

    # for stump trainers, the logit loss function is preferred
    loss_function = bob.learn.boosting.LogitLoss()
    weak_trainer = bob.learn.boosting.LUTTrainer(256, len(digits), "independent")
    booster = bob.learn.boosting.Boosting(weak_trainer, loss_function)

    # perform boosting
    weights = numpy.array([2.94443872, 2.70805517, 2.34454354, 2.94443872])
    machine = booster.train(inputs.astype(numpy.uint16), aligned, number_of_rounds=1)
    self.assertEqual(machine.weights.shape, (1,len(digits)))
    self.assertTrue(numpy.allclose(machine.weights, -weights))
    self.assertEqual(len(machine.weak_machines), 1)
    self.assertTrue(all(machine.indices == [215, 236, 264, 349]))
    weak = machine.weak_machines[0]
    self.assertTrue(isinstance(weak, bob.learn.boosting.LUTMachine))
    self.assertEqual(weak.lut.shape, (256,4))

    # check first training image
    score = numpy.ndarray(4)
    machine(inputs[0].astype(numpy.uint16), score)
    self.assertTrue(numpy.allclose(score, weights * numpy.array([1., -1., -1., -1.])))

    # check all training images
    scores = numpy.ndarray(aligned.shape)
    labels = numpy.ndarray(aligned.shape)
    machine(inputs.astype(numpy.uint16), scores, labels)
    # assert that 294 (out of 360) labels are correctly classified by a single feature position
    self.assertTrue(all([numpy.allclose(numpy.abs(scores[i]), weights) for i in range(labels.shape[0])]))
    self.assertEqual(numpy.count_nonzero(labels == aligned), 294)
