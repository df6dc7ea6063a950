// The sparkline's polyline points: values 0..max across an 80 x 20 box, the top 1 px and bottom 1 px kept free.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { points } from '../src/views/sparkline.js'

test('values span the width, scaled to max and capped at it', () => {
  assert.equal(points([0, 50, 100, 150], 100), '0,19 26.7,10 53.3,1 80,1')
})

test('one value sits at the right edge; max 0 scales to the largest value', () => {
  assert.equal(points([5], 10), '80,10')
  assert.equal(points([1, 4], 0), '0,14.5 80,1')
})
