"""
Exporting to scikit-learn and ONNX
==================================

A fitted tree becomes a scikit-learn ``DecisionTreeClassifier`` that predicts exactly as satdt
does, so scikit-learn's own tools draw and print it, and skl2onnx carries it to ONNX runtimes.
"""

import matplotlib.pyplot as plt
import numpy as np
import onnxruntime
from sklearn.datasets import load_iris
from sklearn.tree import export_text, plot_tree

from satdt import OptimalTreeClassifier

data = load_iris()
model = OptimalTreeClassifier(objective="error", max_depth=3).fit(data.data, data.target)
clf = model.to_sklearn()
print("same predictions:", (clf.predict(data.data) == model.predict(data.data)).all())
print(export_text(clf, feature_names=list(data.feature_names)))

session = onnxruntime.InferenceSession(
    model.to_onnx().SerializeToString(), providers=["CPUExecutionProvider"]
)
labels, _ = session.run(None, {"X": data.data.astype(np.float32)})
print("ONNX agrees:", (labels == model.predict(data.data)).all())

fig, ax = plt.subplots(figsize=(10, 5))
plot_tree(clf, feature_names=data.feature_names, class_names=list(data.target_names), ax=ax)
plt.show()
