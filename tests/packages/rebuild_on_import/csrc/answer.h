#pragma once
int rebuildme_answer();
